
duffingR3