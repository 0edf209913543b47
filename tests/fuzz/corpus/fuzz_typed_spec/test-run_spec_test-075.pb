
duffingJgpu