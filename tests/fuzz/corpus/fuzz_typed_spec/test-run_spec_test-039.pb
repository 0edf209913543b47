
duffing"ÿÿÿÿÿÿÿÿÿ