// The one precompiled header for translation units that use LibTorch.
#pragma once
#include <torch/torch.h>
