
duffing2
rk4!š™™™™™¹¿