
duffing"
R2