
duffing"R2first:1