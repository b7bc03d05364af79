"""Training and evaluation scripts (Stable-Baselines3 / sb3-contrib), read top to bottom."""
