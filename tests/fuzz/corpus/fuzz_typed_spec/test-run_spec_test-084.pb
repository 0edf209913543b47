
duffingR"q"q