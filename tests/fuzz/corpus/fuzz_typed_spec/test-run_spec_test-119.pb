
duffing"А╚па%