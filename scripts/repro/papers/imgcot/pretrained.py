"""Stage (config/full.yaml): ImgCoT with a frozen pretrained LM, SmolLM2-135M-Instruct, on GSM-style problems.

The problems are reasoning-gym's GSM-symbolic templates with worked answers (``language`` source). Each worked
answer is rendered with the dynamic font rule, the image tokenizer (the same VQ-VAE as the default path) is
trained on the renders, and a linear projector maps the quantised latent vectors into the LM's input
embedding space; only the projector is trained (the LM stays frozen), with the loss on the answer tokens
after ``question -> latent tokens -> "The answer is"``. Accuracy is compared with the frozen LM answering
directly (no CoT) on held-out problems.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from repro.data.language.corpora import gsm_problems
from repro.data.language.model import LanguageModel, smollm2
from repro.learning.training import seed_everything
from repro.papers.imgcot.models import ImageVQ, image_loss
from repro.papers.imgcot.render import render
from repro.workflow.io import write_json

ANSWER_CUE = " The answer is"


def render_all(problems, cfg: dict) -> np.ndarray:
    img = cfg["image"]
    return (
        np.stack([render(list(p.steps), img["height"], img["width"], img["max_font"])[0] for p in problems]).astype(
            np.float32
        )
        / 255.0
    )


def embed(lm: LanguageModel, text: str) -> torch.Tensor:
    ids = torch.tensor([lm.tokenizer(text, add_special_tokens=False).input_ids])
    return lm.model.get_input_embeddings()(ids)[0]


def prefix(lm: LanguageModel, question: str, latents: torch.Tensor | None) -> torch.Tensor:
    """Input embeddings: the chat prompt with the question, the projected latents (if any), the answer cue."""
    parts = [embed(lm, lm.chat_prompt(question))]
    if latents is not None:
        parts.append(latents)
    parts.append(embed(lm, ANSWER_CUE))
    return torch.cat(parts)


def answer_loss(
    lm: LanguageModel, projector: torch.nn.Module, question: str, codes: torch.Tensor, answer: str
) -> torch.Tensor:
    target = torch.tensor(lm.tokenizer(" " + answer, add_special_tokens=False).input_ids)
    context = prefix(lm, question, projector(codes))
    full = torch.cat([context, lm.model.get_input_embeddings()(target)])
    logits = lm.model(inputs_embeds=full[None]).logits[0, len(context) - 1 : -1]
    return F.cross_entropy(logits, target)


def greedy_answer(lm: LanguageModel, context: torch.Tensor, max_new_tokens: int) -> str:
    with torch.no_grad():
        out = lm.model.generate(
            inputs_embeds=context[None],
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=lm.tokenizer.pad_token_id,
            eos_token_id=lm.tokenizer.eos_token_id,
        )
    text = lm.tokenizer.decode(out[0], skip_special_tokens=True).strip()
    return text.split()[0].rstrip(".,") if text else ""


def run(lm: LanguageModel, gsm_root: str, cfg: dict, seed: int) -> dict:
    seed_everything(seed)
    for p in lm.model.parameters():
        p.requires_grad_(False)
    problems = gsm_problems(gsm_root, cfg["n_train"] + cfg["n_test"], cfg["data_seed"])
    images = torch.from_numpy(render_all(problems, cfg))
    lat = cfg["latent"]
    vq = ImageVQ(lat["n_latent"], lat["codebook"], lat["dim"], cfg["image"]["height"], cfg["image"]["width"])
    opt = torch.optim.AdamW(vq.parameters(), lr=cfg["tokenizer"]["lr"])
    train_idx = np.arange(cfg["n_train"])
    rng = np.random.default_rng(seed)
    for _ in range(cfg["tokenizer"]["steps"]):
        batch = images[rng.choice(train_idx, min(len(train_idx), cfg["tokenizer"]["batch"]), replace=False)]
        opt.zero_grad()
        image_loss(vq, batch).backward()
        opt.step()
    with torch.no_grad():
        latents = vq.encode(images)[0]
    hidden = lm.model.config.hidden_size
    projector = torch.nn.Linear(lat["dim"], hidden)
    opt = torch.optim.AdamW(projector.parameters(), lr=cfg["projector"]["lr"])
    for _ in range(cfg["projector"]["steps"]):
        i = int(rng.choice(train_idx))
        opt.zero_grad()
        answer_loss(lm, projector, problems[i].question, latents[i], problems[i].answer).backward()
        opt.step()
    test = range(cfg["n_train"], len(problems))
    correct = {"no_cot": [], "imgcot": []}
    with torch.no_grad():
        for i in test:
            q, a = problems[i].question, problems[i].answer
            correct["no_cot"].append(greedy_answer(lm, prefix(lm, q, None), cfg["max_new_tokens"]) == a)
            correct["imgcot"].append(
                greedy_answer(lm, prefix(lm, q, projector(latents[i])), cfg["max_new_tokens"]) == a
            )
    return {
        "model_sha256": lm.sha256,
        "accuracy": {k: float(np.mean(v)) for k, v in correct.items()},
        "reasoning_tokens": {"no_cot": 0, "imgcot": lat["n_latent"]},
        "full_cot_text_tokens": float(
            np.mean([len(lm.tokenizer("\n".join(problems[i].steps)).input_ids) for i in test])
        ),
        "n_test": len(test),
    }


def main(job) -> None:
    cfg = job.params.settings["smollm2"]
    torch.set_num_threads(int(getattr(job, "threads", 1) or 1))
    write_json(job.output.smollm2, run(smollm2(job.input.model), job.input.gsm, cfg, job.params.seed))
