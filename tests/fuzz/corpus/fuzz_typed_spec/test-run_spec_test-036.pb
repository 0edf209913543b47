
duffing"