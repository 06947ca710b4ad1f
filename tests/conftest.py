from pm_private.compile_cache import use_compile_cache

use_compile_cache()  # one PyTensor compile cache for the whole suite, set before PyTensor loads
