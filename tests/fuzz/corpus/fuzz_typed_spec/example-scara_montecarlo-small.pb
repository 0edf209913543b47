
scara"Š(èlhs"!
	params.m4
	333333Ó?š™™™™™é?"
q0[0]	es-8RÁà?{®Gáz„?"
q0[1]	:þýfÁ·î?{®Gáz„?"
q0[2]	Öë{óéÎÚ?{®Gáz„?(2
dopri5)•Ö&è.>1•Ö&è.>Bfp64JautoRefirst:10Z¶SCARA robots following the helix (MODELS.md sec. 6) with a random payload mass m4 and initial joint angles perturbed around the paper's q0 = (30, 55, 24 degrees, 0); every initial condition is assembled onto the constraint set, then Baumgarte-stabilized with the model's default gains (alpha = 30, beta = 225).