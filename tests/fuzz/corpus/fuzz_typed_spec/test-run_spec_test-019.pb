
duffing"