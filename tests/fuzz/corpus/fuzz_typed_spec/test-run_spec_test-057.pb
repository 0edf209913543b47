
duffing2
euler