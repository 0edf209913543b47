
duffingbblock