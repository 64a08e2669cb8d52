import { z } from "zod";

/** An absolute http(s) URL, without credentials (they belong in a sealed header). */
export const HttpUrlSchema = z
  .string()
  .max(2048)
  .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "an absolute http(s) URL")
  .refine(
    (u) => !URL.canParse(u) || (new URL(u).username === "" && new URL(u).password === ""),
    "a URL without credentials (send them in a header)",
  );
