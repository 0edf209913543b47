
scara