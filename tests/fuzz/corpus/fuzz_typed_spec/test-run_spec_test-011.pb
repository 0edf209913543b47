
duffing"
lhs"
qd0[1]	š™™™™™¹?