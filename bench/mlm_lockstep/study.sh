#!/bin/bash
# per seed: sift pretrain (clip default and 0, dumping batches), then the 4 PyTorch-loop mixes
seed=$1
d=/tmp/lockstep/s$seed; rm -rf $d; mkdir -p $d/dump
cp w/unlabelled.txt w/held_out.txt w/vocab.txt $d/
sed "s/seed: 1/seed: $seed/; s/name: seed1/name: seed$seed/" w/pretrain.yaml > $d/pretrain.yaml
cd $d
a=$(SIFT_MLM_DUMP=$d/dump /work/wt-mlm/build/sift pretrain pretrain.yaml --quiet --json | grep '"mask_accuracy"' | tr -dc '0-9.')
b=$(/work/wt-mlm/build/sift pretrain pretrain.yaml --quiet --json --set train.clip_norm=0 | grep '"mask_accuracy"' | tr -dc '0-9.')
cd /tmp/lockstep
r1=$(INIT=ref TT=0 /usr/bin/python3 train600.py $d ref $seed | awk '{print $NF}')
r2=$(INIT=ref TT=0 /usr/bin/python3 train600.py $d sift $seed | awk '{print $NF}')
r3=$(/usr/bin/python3 train600.py $d ref $seed | awk '{print $NF}')
r4=$(/usr/bin/python3 train600.py $d sift $seed | awk '{print $NF}')
echo "seed $seed sift_clip1 $a sift_clip0 $b | refinit_refdata $r1 refinit_siftdata $r2 siftinit_refdata $r3 siftinit_siftdata $r4"
