
duffingbwarp