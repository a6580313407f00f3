ALTER TABLE "transfers" ADD COLUMN "reference" text;
