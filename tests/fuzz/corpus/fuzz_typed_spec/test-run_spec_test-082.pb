
duffing"R
ÿÿÿÿÿÿÿÿÿ