-- A 4-bit counter clocked at 100 MHz (10 ns period), with a synchronous reset held for
-- the first two cycles and an enable that drops for 50 ns; run for 500 ns.
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity counter is
  port (clk, rst, en : in std_logic; count : out std_logic_vector(3 downto 0));
end entity;

architecture rtl of counter is
  signal value : unsigned(3 downto 0) := (others => '0');
begin
  process (clk) begin
    if rising_edge(clk) then
      if rst = '1' then
        value <= (others => '0');
      elsif en = '1' then
        value <= value + 1;
      end if;
    end if;
  end process;
  count <= std_logic_vector(value);
end architecture;

library ieee;
use ieee.std_logic_1164.all;

entity counter_tb is
end entity;

architecture sim of counter_tb is
  signal clk : std_logic := '0';
  signal rst : std_logic := '1';
  signal en : std_logic := '1';
  signal count : std_logic_vector(3 downto 0);
begin
  clk <= not clk after 5 ns when now < 500 ns;
  rst <= '0' after 20 ns;
  en <= '0' after 200 ns, '1' after 250 ns;
  dut : entity work.counter port map (clk => clk, rst => rst, en => en, count => count);
end architecture;
