
duffingJtpu