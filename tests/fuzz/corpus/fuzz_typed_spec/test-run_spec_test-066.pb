
duffing28
