#!/bin/sh
#SBATCH -t 5
echo "time limit from the command line"
