
dufing