
duffingR"q"velocity