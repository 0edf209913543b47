
duffing