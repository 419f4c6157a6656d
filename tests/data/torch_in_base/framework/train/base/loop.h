// A torch-free file that reaches for the LibTorch half of its own library: refused.
#pragma once
#include "framework/train/torch_learner.h"
