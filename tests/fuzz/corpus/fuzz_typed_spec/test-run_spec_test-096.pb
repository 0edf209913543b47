
duffing23t¬<{¬ÿ3t¬<{¬