
duffingRsome