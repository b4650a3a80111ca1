#!/bin/bash
#SBATCH --array=0-99%10
python task.py
