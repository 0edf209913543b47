
duffing2	!š™™™™™¹¿