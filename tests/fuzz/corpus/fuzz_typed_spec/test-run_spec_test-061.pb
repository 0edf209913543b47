
duffing2	1•Ö&è.¾