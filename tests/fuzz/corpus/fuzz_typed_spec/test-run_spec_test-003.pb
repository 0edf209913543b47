
flexible_joint