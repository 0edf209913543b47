
duffingBfp16