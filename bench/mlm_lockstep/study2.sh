#!/bin/bash
seed=$1; d=/tmp/lockstep/s$seed; cd /tmp/lockstep
r1=$(INIT=sift_nott /usr/bin/python3 train600.py $d ref $seed | awk '{print $NF}')
r2=$(INIT=sift_nott /usr/bin/python3 train600.py $d sift $seed | awk '{print $NF}')
r3=$(INIT=ref_tt /usr/bin/python3 train600.py $d ref $seed | awk '{print $NF}')
echo "seed $seed siftnott_refdata $r1 siftnott_siftdata $r2 reftt_refdata $r3"
