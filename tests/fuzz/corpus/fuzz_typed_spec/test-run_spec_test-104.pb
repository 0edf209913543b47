
duffingbfused