
duffing"R2all