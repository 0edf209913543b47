
duffingR2