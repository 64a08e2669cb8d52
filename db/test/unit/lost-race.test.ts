import { againIfLost } from "@aexhq/brain-db/writer";
import { describe, expect, it } from "vitest";

// A transaction that lost a deadlock or a serialization conflict runs again; nothing else does.

const lost = (code: string) => Object.assign(new Error(`lost (${code})`), { code });

describe("againIfLost", () => {
  it("runs the work again while it loses a race, at most three times in all", async () => {
    let tries = 0;
    const answer = await againIfLost(async () => {
      tries++;
      if (tries === 1) throw lost("40P01");
      if (tries === 2) throw lost("40001");
      return "done";
    });
    expect({ answer, tries }).toEqual({ answer: "done", tries: 3 });
    let always = 0;
    const gaveUp = againIfLost(async () => {
      always++;
      throw lost("40P01");
    });
    await expect(gaveUp).rejects.toMatchObject({ code: "40P01" });
    expect(always).toBe(3);
  });

  it("does not run again after any other failure", async () => {
    let tries = 0;
    const failed = againIfLost(async () => {
      tries++;
      throw lost("23505");
    });
    await expect(failed).rejects.toMatchObject({ code: "23505" });
    expect(tries).toBe(1);
  });
});
