#!/usr/bin/env python3
#SBATCH --gres=gpu:1
print("hello")
