
duffingR	first:x