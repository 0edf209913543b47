
duffingR