
duffing"