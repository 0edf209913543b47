
duffing2	)•Ö&è.¾