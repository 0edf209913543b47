
duffing"
halton