
duffing2
rk4!{®Gáz„?