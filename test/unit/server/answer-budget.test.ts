import { describe, expect, it } from 'vitest';
import { AnswerBudget } from '../../../src/server/admission.js';

describe('AnswerBudget: admitted by estimate, held by what the passages weigh', () => {
  it('a lease grows to what was counted, within the budget beside others', () => {
    const b = new AnswerBudget(100);
    const a = b.tryReserve(10);
    const c = b.tryReserve(10);
    expect(a && c).toBeTruthy();
    expect(a?.account(30)).toBe(true); // 30 counted: the lease holds 30, not 10 + 30
    expect(a?.bytes).toBe(30);
    expect(b.heldBytes).toBe(40);
    expect(a?.account(5)).toBe(true);
    expect(b.heldBytes).toBe(45);
    // c is not the eldest: growing past the budget is refused, and it holds no more
    expect(c?.account(80)).toBe(false);
    expect(c?.bytes).toBe(10);
    expect(b.heldBytes).toBe(45);
    c?.release();
    a?.release();
    expect(b.heldBytes).toBe(0);
  });

  it('the eldest lease grows past the budget, and no new answer is admitted until it has gone', () => {
    const b = new AnswerBudget(100);
    const eldest = b.tryReserve(10);
    const younger = b.tryReserve(10);
    expect(eldest?.account(250)).toBe(true);
    expect(b.heldBytes).toBe(260);
    expect(b.tryReserve(1)).toBeUndefined();
    expect(younger?.account(20)).toBe(false);
    eldest?.release();
    // the younger one is now the eldest
    expect(younger?.account(20)).toBe(true);
    expect(b.heldBytes).toBe(20);
    younger?.release();
    expect(b.tryReserve(1000)).toBeDefined(); // alone, as before: admitted whatever its estimate
  });

  it('counting after release does nothing, and release twice gives back once', () => {
    const b = new AnswerBudget(100);
    const l = b.tryReserve(10);
    l?.release();
    l?.release();
    expect(l?.account(500)).toBe(true);
    expect(b.heldBytes).toBe(0);
  });
});
