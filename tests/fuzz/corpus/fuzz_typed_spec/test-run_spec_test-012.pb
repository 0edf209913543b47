
duffing"ÿÿÿÿÿÿÿÿÿsobol