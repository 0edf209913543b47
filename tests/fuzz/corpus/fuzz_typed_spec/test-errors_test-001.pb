
no_such_model