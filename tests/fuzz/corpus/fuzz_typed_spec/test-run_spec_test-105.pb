
duffingbcusolver