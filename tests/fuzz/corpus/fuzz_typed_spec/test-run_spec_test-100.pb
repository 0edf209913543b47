
duffingJcpu